// The page's texts in the five form locales. Amounts, dates and names arrive already formatted.
import type { HostedFormLocale } from '@byrd/contracts/browser';

export type CopyItem = 'entity' | 'reference' | 'amount';

export interface Messages {
  pageTitle: (merchant: string) => string;
  loading: string;
  testMode: string;
  orderRef: (ref: string) => string;
  amountToPay: string;
  securePayment: string;

  chooseMethod: string;
  methodCard: string;
  methodCardHint: string;
  methodMultibanco: string;
  methodMultibancoHint: string;
  methodMbway: string;
  methodMbwayHint: string;
  backToMethods: string;

  cardTitle: string;
  cardNumber: string;
  cardBrand: (brand: string) => string;
  expiry: string;
  expiryHint: string;
  cvv: string;
  cvvHint: (digits: number) => string;
  holder: string;
  saveCard: string;
  saveCardHint: (merchant: string) => string;
  pay: (amount: string) => string;
  processing: string;
  numberRequired: string;
  numberInvalid: string;
  expiryRequired: string;
  expiryInvalid: string;
  expiryPast: string;
  cvvRequired: string;
  cvvLength: (digits: number) => string;
  holderRequired: string;
  formErrors: (count: number) => string;
  declined: string;
  authFailed: string;
  tryLater: string;

  threeDSTitle: string;
  threeDSText: string;
  threeDSWorking: string;

  mbTitle: string;
  mbIntro: string;
  mbGenerate: string;
  mbReferenceTitle: string;
  mbReferenceIntro: string;
  entity: string;
  reference: string;
  amount: string;
  payBy: string;
  /** Labels of the copy buttons, and what is announced once copied. */
  copy: Record<CopyItem, string>;
  copied: Record<CopyItem, string>;
  mbNote: string;

  mbwayTitle: string;
  mbwayIntro: string;
  phone: string;
  phoneHint: string;
  phoneRequired: string;
  phoneInvalid: string;
  mbwaySend: string;
  mbwayWaitingTitle: string;
  mbwayWaitingText: (amount: string, phone: string) => string;
  mbwayWaitingStatus: string;
  mbwayFailed: string;
  mbwayStillWaiting: string;
  checkAgain: string;
  tryAgain: string;

  successTitle: string;
  authorizedTitle: string;
  successText: (amount: string, merchant: string) => string;
  authorizedText: (amount: string, merchant: string) => string;
  failedTitle: string;
  processingTitle: string;
  processingText: string;
  transaction: string;
  cardSaved: (masked: string) => string;
  redirecting: (merchant: string) => string;
  returnTo: (merchant: string) => string;

  paidTitle: string;
  paidText: string;
  /** A pre-authorisation of the order succeeded: its money is held until the shop captures it. */
  authorizedOrderTitle: string;
  authorizedOrderText: (merchant: string) => string;
  canceledTitle: string;
  expiredTitle: string;
  refundedTitle: string;
  refundedText: string;
  closedText: string;
  inProgressTitle: string;
  inProgressText: string;
  /** The order is open, but none of the methods it allows can pay it here (nor its currency). */
  noMethodTitle: string;
  noMethodText: string;

  notFoundTitle: string;
  notFoundText: string;
  invalidLinkTitle: string;
  invalidLinkText: string;
  technicalDetails: string;
  loadFailedTitle: string;
  loadFailedText: string;
  reload: string;
  network: string;
  tooMany: string;
  generic: string;

  cancel: string;
  cancelConfirm: (merchant: string) => string;
  cancelYes: string;
  cancelNo: string;
  canceling: string;
}

const en: Messages = {
  pageTitle: (merchant) => `Payment to ${merchant}`,
  loading: 'Loading your order…',
  testMode: 'Test mode: no real payment will be made',
  orderRef: (ref) => `Order ${ref}`,
  amountToPay: 'Amount to pay',
  securePayment: 'Your payment details are encrypted and sent securely.',

  chooseMethod: 'Choose how to pay',
  methodCard: 'Card',
  methodCardHint: 'Visa, Mastercard, American Express and more',
  methodMultibanco: 'Multibanco',
  methodMultibancoHint: 'Pay with a reference at an ATM or in home banking',
  methodMbway: 'MB WAY',
  methodMbwayHint: 'Confirm on your phone in the MB WAY app',
  backToMethods: 'Other payment methods',

  cardTitle: 'Pay by card',
  cardNumber: 'Card number',
  cardBrand: (brand) => `${brand} card`,
  expiry: 'Expiry date',
  expiryHint: 'MM/YY',
  cvv: 'Security code',
  cvvHint: (digits) =>
    `${digits} digits, ${digits === 4 ? 'on the front' : 'usually on the back'} of the card`,
  holder: 'Name on card',
  saveCard: 'Save my card for future payments',
  saveCardHint: (merchant) => `Your card is stored securely so you can pay ${merchant} faster next time.`,
  pay: (amount) => `Pay ${amount}`,
  processing: 'Processing…',
  numberRequired: 'Enter the card number.',
  numberInvalid: 'This card number is not valid. Check it and try again.',
  expiryRequired: 'Enter the expiry date.',
  expiryInvalid: 'Enter the expiry date as MM/YY.',
  expiryPast: 'This card has expired.',
  cvvRequired: 'Enter the security code.',
  cvvLength: (digits) => `The security code has ${digits} digits.`,
  holderRequired: 'Enter the name shown on the card.',
  formErrors: (count) =>
    count === 1 ? 'There is 1 error in the form.' : `There are ${count} errors in the form.`,
  declined: 'The payment was declined. Try another card or contact your bank.',
  authFailed: 'Your bank could not confirm the payment. Try again or use another card.',
  tryLater: 'The payment could not be completed right now. Please try again in a moment.',

  threeDSTitle: 'Confirm with your bank',
  threeDSText: 'Your bank may ask you to confirm this payment. Follow the steps below.',
  threeDSWorking: 'Checking the payment with your bank…',

  mbTitle: 'Pay with Multibanco',
  mbIntro: 'You will get an entity and a reference to pay at any Multibanco ATM or in your home banking.',
  mbGenerate: 'Get payment reference',
  mbReferenceTitle: 'Your Multibanco reference',
  mbReferenceIntro: 'Pay at a Multibanco ATM or in your home banking, under “Payments of services”.',
  entity: 'Entity',
  reference: 'Reference',
  amount: 'Amount',
  payBy: 'Pay by',
  copy: { entity: 'Copy entity', reference: 'Copy reference', amount: 'Copy amount' },
  copied: { entity: 'Entity copied', reference: 'Reference copied', amount: 'Amount copied' },
  mbNote: 'Your order is confirmed as soon as the payment is received.',

  mbwayTitle: 'Pay with MB WAY',
  mbwayIntro: 'We will send a payment request to the MB WAY app on your phone.',
  phone: 'Phone number',
  phoneHint: 'The number linked to MB WAY. Portuguese numbers need no +351, e.g. 912 345 678.',
  phoneRequired: 'Enter your MB WAY phone number.',
  phoneInvalid: 'Enter a valid mobile number, e.g. 912 345 678.',
  mbwaySend: 'Send request to MB WAY',
  mbwayWaitingTitle: 'Confirm in the MB WAY app',
  mbwayWaitingText: (amount, phone) =>
    `We sent a payment request of ${amount} to ${phone}. Open the MB WAY app and accept it.`,
  mbwayWaitingStatus: 'Waiting for your confirmation…',
  mbwayFailed: 'The MB WAY payment was not completed: it was declined or the request expired.',
  mbwayStillWaiting: 'We have not received a confirmation yet.',
  checkAgain: 'Check again',
  tryAgain: 'Try again',

  successTitle: 'Payment successful',
  authorizedTitle: 'Payment authorised',
  successText: (amount, merchant) => `You paid ${amount} to ${merchant}.`,
  authorizedText: (amount, merchant) =>
    `${amount} was authorised on your card. ${merchant} will charge it when your order is confirmed.`,
  failedTitle: 'Payment not completed',
  processingTitle: 'Payment being processed',
  processingText: 'We will let the shop know as soon as your payment is confirmed.',
  transaction: 'Transaction',
  cardSaved: (masked) => `Your card ${masked} was saved for future payments.`,
  redirecting: (merchant) => `Taking you back to ${merchant}…`,
  returnTo: (merchant) => `Return to ${merchant}`,

  paidTitle: 'This order has already been paid',
  paidText: 'There is nothing left to pay. You can return to the shop.',
  authorizedOrderTitle: 'The payment for this order has been authorised',
  authorizedOrderText: (merchant) =>
    `There is nothing left to pay. ${merchant} will charge your card when your order is confirmed.`,
  canceledTitle: 'This order was canceled',
  expiredTitle: 'This order has expired',
  refundedTitle: 'This order has been refunded',
  refundedText: 'The payment of this order was refunded. There is nothing left to pay.',
  closedText: 'It can no longer be paid. Please return to the shop to place a new order.',
  inProgressTitle: 'A payment for this order is in progress',
  inProgressText: 'Please wait for it to complete. The shop will confirm your order.',
  noMethodTitle: 'No payment method is available for this order',
  noMethodText: 'None of the ways to pay offered here can be used for this order. Please return to the shop to choose another way to pay.',

  notFoundTitle: 'We couldn’t find this order',
  notFoundText:
    'The payment link may be incomplete or no longer valid. Please return to the shop and try again.',
  invalidLinkTitle: 'This payment link is not valid',
  invalidLinkText:
    'Some of its details are missing or do not match. Please return to the shop and try again.',
  technicalDetails: 'Technical details',
  loadFailedTitle: 'We couldn’t load your order',
  loadFailedText: 'Check your internet connection and try again.',
  reload: 'Try again',
  network: 'We couldn’t reach the payment service. Check your connection and try again.',
  tooMany: 'Too many attempts. Please wait a moment and try again.',
  generic: 'Something went wrong. Please try again.',

  cancel: 'Cancel payment',
  cancelConfirm: (merchant) => `Cancel this order and return to ${merchant}?`,
  cancelYes: 'Yes, cancel',
  cancelNo: 'No, continue',
  canceling: 'Canceling…',
};

const ptPT: Messages = {
  pageTitle: (merchant) => `Pagamento a ${merchant}`,
  loading: 'A carregar a sua encomenda…',
  testMode: 'Modo de teste: não será feito nenhum pagamento real',
  orderRef: (ref) => `Encomenda ${ref}`,
  amountToPay: 'Valor a pagar',
  securePayment: 'Os seus dados de pagamento são cifrados e enviados de forma segura.',

  chooseMethod: 'Escolha como pagar',
  methodCard: 'Cartão',
  methodCardHint: 'Visa, Mastercard, American Express e outros',
  methodMultibanco: 'Multibanco',
  methodMultibancoHint: 'Pague com uma referência no multibanco ou no homebanking',
  methodMbway: 'MB WAY',
  methodMbwayHint: 'Confirme no telemóvel, na app MB WAY',
  backToMethods: 'Outros métodos de pagamento',

  cardTitle: 'Pagar com cartão',
  cardNumber: 'Número do cartão',
  cardBrand: (brand) => `Cartão ${brand}`,
  expiry: 'Data de validade',
  expiryHint: 'MM/AA',
  cvv: 'Código de segurança',
  cvvHint: (digits) => `${digits} dígitos, ${digits === 4 ? 'na frente' : 'normalmente no verso'} do cartão`,
  holder: 'Nome no cartão',
  saveCard: 'Guardar o meu cartão para pagamentos futuros',
  saveCardHint: (merchant) =>
    `O seu cartão fica guardado em segurança para pagar a ${merchant} mais depressa da próxima vez.`,
  pay: (amount) => `Pagar ${amount}`,
  processing: 'A processar…',
  numberRequired: 'Introduza o número do cartão.',
  numberInvalid: 'Este número de cartão não é válido. Verifique-o e tente novamente.',
  expiryRequired: 'Introduza a data de validade.',
  expiryInvalid: 'Introduza a data de validade no formato MM/AA.',
  expiryPast: 'Este cartão está expirado.',
  cvvRequired: 'Introduza o código de segurança.',
  cvvLength: (digits) => `O código de segurança tem ${digits} dígitos.`,
  holderRequired: 'Introduza o nome que aparece no cartão.',
  formErrors: (count) => (count === 1 ? 'Há 1 erro no formulário.' : `Há ${count} erros no formulário.`),
  declined: 'O pagamento foi recusado. Experimente outro cartão ou contacte o seu banco.',
  authFailed: 'O seu banco não confirmou o pagamento. Tente novamente ou use outro cartão.',
  tryLater: 'Não foi possível concluir o pagamento neste momento. Tente novamente daqui a pouco.',

  threeDSTitle: 'Confirme com o seu banco',
  threeDSText: 'O seu banco pode pedir-lhe que confirme este pagamento. Siga os passos abaixo.',
  threeDSWorking: 'A verificar o pagamento com o seu banco…',

  mbTitle: 'Pagar por Multibanco',
  mbIntro: 'Vai receber uma entidade e uma referência para pagar em qualquer multibanco ou no homebanking.',
  mbGenerate: 'Obter referência de pagamento',
  mbReferenceTitle: 'A sua referência Multibanco',
  mbReferenceIntro: 'Pague num multibanco ou no homebanking, em “Pagamento de serviços”.',
  entity: 'Entidade',
  reference: 'Referência',
  amount: 'Valor',
  payBy: 'Pagar até',
  copy: { entity: 'Copiar entidade', reference: 'Copiar referência', amount: 'Copiar valor' },
  copied: { entity: 'Entidade copiada', reference: 'Referência copiada', amount: 'Valor copiado' },
  mbNote: 'A sua encomenda fica confirmada assim que o pagamento for recebido.',

  mbwayTitle: 'Pagar com MB WAY',
  mbwayIntro: 'Vamos enviar um pedido de pagamento para a app MB WAY do seu telemóvel.',
  phone: 'Número de telemóvel',
  phoneHint: 'O número associado ao MB WAY. Os números portugueses não precisam de +351, p. ex. 912 345 678.',
  phoneRequired: 'Introduza o seu número de telemóvel MB WAY.',
  phoneInvalid: 'Introduza um número de telemóvel válido, p. ex. 912 345 678.',
  mbwaySend: 'Enviar pedido MB WAY',
  mbwayWaitingTitle: 'Confirme na app MB WAY',
  mbwayWaitingText: (amount, phone) =>
    `Enviámos um pedido de pagamento de ${amount} para ${phone}. Abra a app MB WAY e aceite-o.`,
  mbwayWaitingStatus: 'A aguardar a sua confirmação…',
  mbwayFailed: 'O pagamento MB WAY não foi concluído: foi recusado ou o pedido expirou.',
  mbwayStillWaiting: 'Ainda não recebemos a confirmação.',
  checkAgain: 'Verificar novamente',
  tryAgain: 'Tentar novamente',

  successTitle: 'Pagamento efetuado',
  authorizedTitle: 'Pagamento autorizado',
  successText: (amount, merchant) => `Pagou ${amount} a ${merchant}.`,
  authorizedText: (amount, merchant) =>
    `Foram autorizados ${amount} no seu cartão. ${merchant} fará a cobrança quando confirmar a encomenda.`,
  failedTitle: 'Pagamento não concluído',
  processingTitle: 'Pagamento em processamento',
  processingText: 'Avisaremos a loja assim que o seu pagamento for confirmado.',
  transaction: 'Transação',
  cardSaved: (masked) => `O seu cartão ${masked} foi guardado para pagamentos futuros.`,
  redirecting: (merchant) => `A voltar para ${merchant}…`,
  returnTo: (merchant) => `Voltar para ${merchant}`,

  paidTitle: 'Esta encomenda já foi paga',
  paidText: 'Não há nada por pagar. Pode voltar à loja.',
  authorizedOrderTitle: 'O pagamento desta encomenda já foi autorizado',
  authorizedOrderText: (merchant) =>
    `Não há nada por pagar. ${merchant} fará a cobrança no seu cartão quando confirmar a encomenda.`,
  canceledTitle: 'Esta encomenda foi cancelada',
  expiredTitle: 'Esta encomenda expirou',
  refundedTitle: 'Esta encomenda foi reembolsada',
  refundedText: 'O pagamento desta encomenda foi reembolsado. Não há nada por pagar.',
  closedText: 'Já não pode ser paga. Volte à loja para fazer uma nova encomenda.',
  inProgressTitle: 'Está em curso um pagamento desta encomenda',
  inProgressText: 'Aguarde que seja concluído. A loja irá confirmar a sua encomenda.',
  noMethodTitle: 'Não há nenhum método de pagamento disponível para esta encomenda',
  noMethodText: 'Nenhum dos métodos de pagamento aqui disponíveis serve para esta encomenda. Volte à loja para escolher outra forma de pagamento.',

  notFoundTitle: 'Não encontrámos esta encomenda',
  notFoundText:
    'A ligação de pagamento pode estar incompleta ou já não ser válida. Volte à loja e tente novamente.',
  invalidLinkTitle: 'Esta ligação de pagamento não é válida',
  invalidLinkText: 'Faltam alguns dados ou não coincidem. Volte à loja e tente novamente.',
  technicalDetails: 'Detalhes técnicos',
  loadFailedTitle: 'Não foi possível carregar a sua encomenda',
  loadFailedText: 'Verifique a sua ligação à internet e tente novamente.',
  reload: 'Tentar novamente',
  network: 'Não foi possível contactar o serviço de pagamentos. Verifique a sua ligação e tente novamente.',
  tooMany: 'Demasiadas tentativas. Aguarde um momento e tente novamente.',
  generic: 'Ocorreu um erro. Tente novamente.',

  cancel: 'Cancelar pagamento',
  cancelConfirm: (merchant) => `Cancelar esta encomenda e voltar para ${merchant}?`,
  cancelYes: 'Sim, cancelar',
  cancelNo: 'Não, continuar',
  canceling: 'A cancelar…',
};

const ptBR: Messages = {
  ...ptPT,
  pageTitle: (merchant) => `Pagamento para ${merchant}`,
  loading: 'Carregando seu pedido…',
  testMode: 'Modo de teste: nenhum pagamento real será feito',
  orderRef: (ref) => `Pedido ${ref}`,
  securePayment: 'Seus dados de pagamento são criptografados e enviados com segurança.',

  methodMultibancoHint: 'Pague com uma referência no caixa eletrônico Multibanco ou no internet banking',
  methodMbwayHint: 'Confirme no celular, no app MB WAY',

  cardBrand: (brand) => `Cartão ${brand}`,
  cvvHint: (digits) => `${digits} dígitos, ${digits === 4 ? 'na frente' : 'geralmente no verso'} do cartão`,
  saveCard: 'Salvar meu cartão para pagamentos futuros',
  saveCardHint: (merchant) =>
    `Seu cartão fica armazenado com segurança para você pagar ${merchant} mais rápido da próxima vez.`,
  processing: 'Processando…',
  numberRequired: 'Digite o número do cartão.',
  numberInvalid: 'Este número de cartão não é válido. Confira e tente de novo.',
  expiryRequired: 'Digite a data de validade.',
  expiryInvalid: 'Digite a data de validade no formato MM/AA.',
  expiryPast: 'Este cartão está vencido.',
  cvvRequired: 'Digite o código de segurança.',
  holderRequired: 'Digite o nome impresso no cartão.',
  formErrors: (count) => (count === 1 ? 'Há 1 erro no formulário.' : `Há ${count} erros no formulário.`),
  declined: 'O pagamento foi recusado. Tente outro cartão ou fale com seu banco.',
  authFailed: 'Seu banco não confirmou o pagamento. Tente de novo ou use outro cartão.',
  tryLater: 'Não foi possível concluir o pagamento agora. Tente de novo em instantes.',

  threeDSTitle: 'Confirme com seu banco',
  threeDSText: 'Seu banco pode pedir que você confirme este pagamento. Siga as instruções abaixo.',
  threeDSWorking: 'Verificando o pagamento com seu banco…',

  mbTitle: 'Pagar com Multibanco',
  mbGenerate: 'Gerar referência de pagamento',
  mbIntro:
    'Você vai receber uma entidade e uma referência para pagar em qualquer caixa eletrônico Multibanco ou no internet banking.',
  mbReferenceTitle: 'Sua referência Multibanco',
  mbReferenceIntro:
    'Pague em um caixa eletrônico Multibanco ou no internet banking, em “Pagamento de serviços”.',
  payBy: 'Pagar até',
  mbNote: 'Seu pedido é confirmado assim que o pagamento for recebido.',

  mbwayIntro: 'Vamos enviar uma solicitação de pagamento para o app MB WAY no seu celular.',
  phone: 'Número de celular',
  phoneHint: 'O número vinculado ao MB WAY. Números portugueses dispensam o +351, ex.: 912 345 678.',
  phoneRequired: 'Digite seu número de celular do MB WAY.',
  phoneInvalid: 'Digite um número de celular válido, ex.: 912 345 678.',
  mbwaySend: 'Enviar solicitação ao MB WAY',
  mbwayWaitingTitle: 'Confirme no app MB WAY',
  mbwayWaitingText: (amount, phone) =>
    `Enviamos uma solicitação de pagamento de ${amount} para ${phone}. Abra o app MB WAY e aceite.`,
  mbwayWaitingStatus: 'Aguardando sua confirmação…',
  mbwayFailed: 'O pagamento MB WAY não foi concluído: foi recusado ou a solicitação expirou.',
  mbwayStillWaiting: 'Ainda não recebemos a confirmação.',
  checkAgain: 'Verificar de novo',
  tryAgain: 'Tentar de novo',

  successTitle: 'Pagamento realizado',
  successText: (amount, merchant) => `Você pagou ${amount} para ${merchant}.`,
  authorizedText: (amount, merchant) =>
    `${amount} foram autorizados no seu cartão. ${merchant} fará a cobrança quando confirmar o pedido.`,
  processingText: 'Vamos avisar a loja assim que seu pagamento for confirmado.',
  cardSaved: (masked) => `Seu cartão ${masked} foi salvo para pagamentos futuros.`,
  redirecting: (merchant) => `Voltando para ${merchant}…`,

  paidTitle: 'Este pedido já foi pago',
  paidText: 'Não há nada a pagar. Você pode voltar à loja.',
  authorizedOrderTitle: 'O pagamento deste pedido já foi autorizado',
  authorizedOrderText: (merchant) =>
    `Não há nada a pagar. ${merchant} fará a cobrança no seu cartão quando confirmar o pedido.`,
  canceledTitle: 'Este pedido foi cancelado',
  expiredTitle: 'Este pedido expirou',
  refundedTitle: 'Este pedido foi reembolsado',
  refundedText: 'O pagamento deste pedido foi reembolsado. Não há nada a pagar.',
  closedText: 'Ele não pode mais ser pago. Volte à loja para fazer um novo pedido.',
  inProgressTitle: 'Há um pagamento deste pedido em andamento',
  inProgressText: 'Aguarde a conclusão. A loja vai confirmar seu pedido.',
  noMethodTitle: 'Nenhuma forma de pagamento está disponível para este pedido',
  noMethodText: 'Nenhuma das formas de pagamento disponíveis aqui serve para este pedido. Volte à loja para escolher outra forma de pagamento.',

  notFoundTitle: 'Não encontramos este pedido',
  notFoundText:
    'O link de pagamento pode estar incompleto ou não ser mais válido. Volte à loja e tente de novo.',
  invalidLinkTitle: 'Este link de pagamento não é válido',
  invalidLinkText: 'Alguns dados estão faltando ou não conferem. Volte à loja e tente de novo.',
  loadFailedTitle: 'Não foi possível carregar seu pedido',
  loadFailedText: 'Verifique sua conexão com a internet e tente de novo.',
  reload: 'Tentar de novo',
  network: 'Não foi possível acessar o serviço de pagamento. Verifique sua conexão e tente de novo.',
  tooMany: 'Muitas tentativas. Aguarde um momento e tente de novo.',
  generic: 'Algo deu errado. Tente de novo.',

  cancelConfirm: (merchant) => `Cancelar este pedido e voltar para ${merchant}?`,
  cancelNo: 'Não, continuar',
  canceling: 'Cancelando…',
};

const esES: Messages = {
  pageTitle: (merchant) => `Pago a ${merchant}`,
  loading: 'Cargando tu pedido…',
  testMode: 'Modo de prueba: no se realizará ningún pago real',
  orderRef: (ref) => `Pedido ${ref}`,
  amountToPay: 'Importe a pagar',
  securePayment: 'Tus datos de pago se cifran y se envían de forma segura.',

  chooseMethod: 'Elige cómo pagar',
  methodCard: 'Tarjeta',
  methodCardHint: 'Visa, Mastercard, American Express y más',
  methodMultibanco: 'Multibanco',
  methodMultibancoHint: 'Paga con una referencia en un cajero Multibanco o en la banca online',
  methodMbway: 'MB WAY',
  methodMbwayHint: 'Confirma en tu móvil con la app MB WAY',
  backToMethods: 'Otros métodos de pago',

  cardTitle: 'Pagar con tarjeta',
  cardNumber: 'Número de tarjeta',
  cardBrand: (brand) => `Tarjeta ${brand}`,
  expiry: 'Fecha de caducidad',
  expiryHint: 'MM/AA',
  cvv: 'Código de seguridad',
  cvvHint: (digits) =>
    `${digits} dígitos, ${digits === 4 ? 'en el anverso' : 'normalmente en el reverso'} de la tarjeta`,
  holder: 'Nombre en la tarjeta',
  saveCard: 'Guardar mi tarjeta para futuros pagos',
  saveCardHint: (merchant) =>
    `Tu tarjeta se guarda de forma segura para que pagues a ${merchant} más rápido la próxima vez.`,
  pay: (amount) => `Pagar ${amount}`,
  processing: 'Procesando…',
  numberRequired: 'Introduce el número de la tarjeta.',
  numberInvalid: 'Este número de tarjeta no es válido. Revísalo e inténtalo de nuevo.',
  expiryRequired: 'Introduce la fecha de caducidad.',
  expiryInvalid: 'Introduce la fecha de caducidad con el formato MM/AA.',
  expiryPast: 'Esta tarjeta está caducada.',
  cvvRequired: 'Introduce el código de seguridad.',
  cvvLength: (digits) => `El código de seguridad tiene ${digits} dígitos.`,
  holderRequired: 'Introduce el nombre que figura en la tarjeta.',
  formErrors: (count) =>
    count === 1 ? 'Hay 1 error en el formulario.' : `Hay ${count} errores en el formulario.`,
  declined: 'El pago ha sido rechazado. Prueba con otra tarjeta o contacta con tu banco.',
  authFailed: 'Tu banco no ha confirmado el pago. Inténtalo de nuevo o usa otra tarjeta.',
  tryLater: 'No se ha podido completar el pago en este momento. Inténtalo de nuevo en unos instantes.',

  threeDSTitle: 'Confirma con tu banco',
  threeDSText: 'Es posible que tu banco te pida confirmar este pago. Sigue los pasos que aparecen abajo.',
  threeDSWorking: 'Verificando el pago con tu banco…',

  mbTitle: 'Pagar con Multibanco',
  mbIntro:
    'Recibirás una entidad y una referencia para pagar en cualquier cajero Multibanco o en tu banca online.',
  mbGenerate: 'Obtener referencia de pago',
  mbReferenceTitle: 'Tu referencia Multibanco',
  mbReferenceIntro: 'Paga en un cajero Multibanco o en tu banca online, en «Pago de servicios».',
  entity: 'Entidad',
  reference: 'Referencia',
  amount: 'Importe',
  payBy: 'Pagar antes del',
  copy: { entity: 'Copiar entidad', reference: 'Copiar referencia', amount: 'Copiar importe' },
  copied: { entity: 'Entidad copiada', reference: 'Referencia copiada', amount: 'Importe copiado' },
  mbNote: 'Tu pedido se confirma en cuanto se recibe el pago.',

  mbwayTitle: 'Pagar con MB WAY',
  mbwayIntro: 'Enviaremos una solicitud de pago a la app MB WAY de tu móvil.',
  phone: 'Número de móvil',
  phoneHint: 'El número vinculado a MB WAY. Los números portugueses no necesitan +351, p. ej. 912 345 678.',
  phoneRequired: 'Introduce tu número de móvil de MB WAY.',
  phoneInvalid: 'Introduce un número de móvil válido, p. ej. 912 345 678.',
  mbwaySend: 'Enviar solicitud a MB WAY',
  mbwayWaitingTitle: 'Confirma en la app MB WAY',
  mbwayWaitingText: (amount, phone) =>
    `Hemos enviado una solicitud de pago de ${amount} al ${phone}. Abre la app MB WAY y acéptala.`,
  mbwayWaitingStatus: 'Esperando tu confirmación…',
  mbwayFailed: 'El pago con MB WAY no se ha completado: se rechazó o la solicitud caducó.',
  mbwayStillWaiting: 'Todavía no hemos recibido la confirmación.',
  checkAgain: 'Comprobar de nuevo',
  tryAgain: 'Intentar de nuevo',

  successTitle: 'Pago realizado',
  authorizedTitle: 'Pago autorizado',
  successText: (amount, merchant) => `Has pagado ${amount} a ${merchant}.`,
  authorizedText: (amount, merchant) =>
    `Se han autorizado ${amount} en tu tarjeta. ${merchant} realizará el cobro cuando confirme tu pedido.`,
  failedTitle: 'Pago no completado',
  processingTitle: 'Pago en proceso',
  processingText: 'Avisaremos a la tienda en cuanto se confirme tu pago.',
  transaction: 'Transacción',
  cardSaved: (masked) => `Tu tarjeta ${masked} se ha guardado para futuros pagos.`,
  redirecting: (merchant) => `Volviendo a ${merchant}…`,
  returnTo: (merchant) => `Volver a ${merchant}`,

  paidTitle: 'Este pedido ya está pagado',
  paidText: 'No queda nada por pagar. Puedes volver a la tienda.',
  authorizedOrderTitle: 'El pago de este pedido ya está autorizado',
  authorizedOrderText: (merchant) =>
    `No queda nada por pagar. ${merchant} realizará el cobro en tu tarjeta cuando confirme tu pedido.`,
  canceledTitle: 'Este pedido se ha cancelado',
  expiredTitle: 'Este pedido ha caducado',
  refundedTitle: 'Este pedido se ha reembolsado',
  refundedText: 'El pago de este pedido se ha reembolsado. No queda nada por pagar.',
  closedText: 'Ya no se puede pagar. Vuelve a la tienda para hacer un nuevo pedido.',
  inProgressTitle: 'Hay un pago de este pedido en curso',
  inProgressText: 'Espera a que termine. La tienda confirmará tu pedido.',
  noMethodTitle: 'No hay ningún método de pago disponible para este pedido',
  noMethodText: 'Ninguno de los métodos de pago disponibles aquí sirve para este pedido. Vuelve a la tienda para elegir otra forma de pago.',

  notFoundTitle: 'No hemos encontrado este pedido',
  notFoundText:
    'Puede que el enlace de pago esté incompleto o ya no sea válido. Vuelve a la tienda e inténtalo de nuevo.',
  invalidLinkTitle: 'Este enlace de pago no es válido',
  invalidLinkText: 'Faltan algunos datos o no coinciden. Vuelve a la tienda e inténtalo de nuevo.',
  technicalDetails: 'Detalles técnicos',
  loadFailedTitle: 'No hemos podido cargar tu pedido',
  loadFailedText: 'Comprueba tu conexión a internet e inténtalo de nuevo.',
  reload: 'Intentar de nuevo',
  network: 'No hemos podido conectar con el servicio de pagos. Comprueba tu conexión e inténtalo de nuevo.',
  tooMany: 'Demasiados intentos. Espera un momento e inténtalo de nuevo.',
  generic: 'Algo ha fallado. Inténtalo de nuevo.',

  cancel: 'Cancelar pago',
  cancelConfirm: (merchant) => `¿Cancelar este pedido y volver a ${merchant}?`,
  cancelYes: 'Sí, cancelar',
  cancelNo: 'No, continuar',
  canceling: 'Cancelando…',
};

const frFR: Messages = {
  pageTitle: (merchant) => `Paiement à ${merchant}`,
  loading: 'Chargement de votre commande…',
  testMode: 'Mode test : aucun paiement réel ne sera effectué',
  orderRef: (ref) => `Commande ${ref}`,
  amountToPay: 'Montant à payer',
  securePayment: 'Vos données de paiement sont chiffrées et transmises de façon sécurisée.',

  chooseMethod: 'Choisissez votre moyen de paiement',
  methodCard: 'Carte',
  methodCardHint: 'Visa, Mastercard, American Express et autres',
  methodMultibanco: 'Multibanco',
  methodMultibancoHint: 'Payez avec une référence à un distributeur Multibanco ou en banque en ligne',
  methodMbway: 'MB WAY',
  methodMbwayHint: 'Confirmez sur votre téléphone avec l’application MB WAY',
  backToMethods: 'Autres moyens de paiement',

  cardTitle: 'Payer par carte',
  cardNumber: 'Numéro de carte',
  cardBrand: (brand) => `Carte ${brand}`,
  expiry: 'Date d’expiration',
  expiryHint: 'MM/AA',
  cvv: 'Code de sécurité',
  cvvHint: (digits) => `${digits} chiffres, ${digits === 4 ? 'au recto' : 'généralement au dos'} de la carte`,
  holder: 'Nom sur la carte',
  saveCard: 'Enregistrer ma carte pour mes prochains paiements',
  saveCardHint: (merchant) =>
    `Votre carte est conservée en toute sécurité pour payer ${merchant} plus rapidement la prochaine fois.`,
  pay: (amount) => `Payer ${amount}`,
  processing: 'Traitement en cours…',
  numberRequired: 'Saisissez le numéro de carte.',
  numberInvalid: 'Ce numéro de carte n’est pas valide. Vérifiez-le et réessayez.',
  expiryRequired: 'Saisissez la date d’expiration.',
  expiryInvalid: 'Saisissez la date d’expiration au format MM/AA.',
  expiryPast: 'Cette carte a expiré.',
  cvvRequired: 'Saisissez le code de sécurité.',
  cvvLength: (digits) => `Le code de sécurité comporte ${digits} chiffres.`,
  holderRequired: 'Saisissez le nom figurant sur la carte.',
  formErrors: (count) =>
    count === 1 ? 'Le formulaire contient 1 erreur.' : `Le formulaire contient ${count} erreurs.`,
  declined: 'Le paiement a été refusé. Essayez une autre carte ou contactez votre banque.',
  authFailed: 'Votre banque n’a pas confirmé le paiement. Réessayez ou utilisez une autre carte.',
  tryLater: 'Le paiement n’a pas pu aboutir pour le moment. Veuillez réessayer dans quelques instants.',

  threeDSTitle: 'Confirmez auprès de votre banque',
  threeDSText: 'Votre banque peut vous demander de confirmer ce paiement. Suivez les étapes ci-dessous.',
  threeDSWorking: 'Vérification du paiement auprès de votre banque…',

  mbTitle: 'Payer avec Multibanco',
  mbIntro:
    'Vous recevrez une entité et une référence à payer à n’importe quel distributeur Multibanco ou en banque en ligne.',
  mbGenerate: 'Obtenir la référence de paiement',
  mbReferenceTitle: 'Votre référence Multibanco',
  mbReferenceIntro:
    'Payez à un distributeur Multibanco ou dans votre banque en ligne, rubrique « Paiement de services ».',
  entity: 'Entité',
  reference: 'Référence',
  amount: 'Montant',
  payBy: 'À payer avant le',
  copy: { entity: 'Copier l’entité', reference: 'Copier la référence', amount: 'Copier le montant' },
  copied: { entity: 'Entité copiée', reference: 'Référence copiée', amount: 'Montant copié' },
  mbNote: 'Votre commande est confirmée dès réception du paiement.',

  mbwayTitle: 'Payer avec MB WAY',
  mbwayIntro: 'Nous allons envoyer une demande de paiement à l’application MB WAY de votre téléphone.',
  phone: 'Numéro de téléphone',
  phoneHint:
    'Le numéro associé à MB WAY. Les numéros portugais n’ont pas besoin du +351, par ex. 912 345 678.',
  phoneRequired: 'Saisissez votre numéro de téléphone MB WAY.',
  phoneInvalid: 'Saisissez un numéro de mobile valide, par ex. 912 345 678.',
  mbwaySend: 'Envoyer la demande MB WAY',
  mbwayWaitingTitle: 'Confirmez dans l’application MB WAY',
  mbwayWaitingText: (amount, phone) =>
    `Nous avons envoyé une demande de paiement de ${amount} au ${phone}. Ouvrez l’application MB WAY et acceptez-la.`,
  mbwayWaitingStatus: 'En attente de votre confirmation…',
  mbwayFailed: 'Le paiement MB WAY n’a pas abouti : il a été refusé ou la demande a expiré.',
  mbwayStillWaiting: 'Nous n’avons pas encore reçu de confirmation.',
  checkAgain: 'Vérifier à nouveau',
  tryAgain: 'Réessayer',

  successTitle: 'Paiement réussi',
  authorizedTitle: 'Paiement autorisé',
  successText: (amount, merchant) => `Vous avez payé ${amount} à ${merchant}.`,
  authorizedText: (amount, merchant) =>
    `${amount} ont été autorisés sur votre carte. ${merchant} effectuera le débit à la confirmation de votre commande.`,
  failedTitle: 'Paiement non abouti',
  processingTitle: 'Paiement en cours de traitement',
  processingText: 'Nous informerons la boutique dès que votre paiement sera confirmé.',
  transaction: 'Transaction',
  cardSaved: (masked) => `Votre carte ${masked} a été enregistrée pour vos prochains paiements.`,
  redirecting: (merchant) => `Retour vers ${merchant}…`,
  returnTo: (merchant) => `Retourner sur ${merchant}`,

  paidTitle: 'Cette commande a déjà été payée',
  paidText: 'Il n’y a plus rien à payer. Vous pouvez retourner sur la boutique.',
  authorizedOrderTitle: 'Le paiement de cette commande a déjà été autorisé',
  authorizedOrderText: (merchant) =>
    `Il n’y a plus rien à payer. ${merchant} effectuera le débit sur votre carte à la confirmation de votre commande.`,
  canceledTitle: 'Cette commande a été annulée',
  expiredTitle: 'Cette commande a expiré',
  refundedTitle: 'Cette commande a été remboursée',
  refundedText: 'Le paiement de cette commande a été remboursé. Il n’y a plus rien à payer.',
  closedText: 'Elle ne peut plus être payée. Retournez sur la boutique pour passer une nouvelle commande.',
  inProgressTitle: 'Un paiement de cette commande est en cours',
  inProgressText: 'Veuillez patienter jusqu’à la fin. La boutique confirmera votre commande.',
  noMethodTitle: 'Aucun moyen de paiement n’est disponible pour cette commande',
  noMethodText: 'Aucun des moyens de paiement proposés ici ne convient à cette commande. Retournez sur la boutique pour choisir un autre moyen de paiement.',

  notFoundTitle: 'Nous n’avons pas trouvé cette commande',
  notFoundText:
    'Le lien de paiement est peut-être incomplet ou n’est plus valide. Retournez sur la boutique et réessayez.',
  invalidLinkTitle: 'Ce lien de paiement n’est pas valide',
  invalidLinkText:
    'Certaines informations sont manquantes ou ne correspondent pas. Retournez sur la boutique et réessayez.',
  technicalDetails: 'Détails techniques',
  loadFailedTitle: 'Impossible de charger votre commande',
  loadFailedText: 'Vérifiez votre connexion internet et réessayez.',
  reload: 'Réessayer',
  network: 'Impossible de joindre le service de paiement. Vérifiez votre connexion et réessayez.',
  tooMany: 'Trop de tentatives. Patientez un instant puis réessayez.',
  generic: 'Une erreur est survenue. Veuillez réessayer.',

  cancel: 'Annuler le paiement',
  cancelConfirm: (merchant) => `Annuler cette commande et retourner sur ${merchant} ?`,
  cancelYes: 'Oui, annuler',
  cancelNo: 'Non, continuer',
  canceling: 'Annulation…',
};

const DICTIONARY: Record<HostedFormLocale, Messages> = {
  en_US: en,
  pt_PT: ptPT,
  pt_BR: ptBR,
  es_ES: esES,
  fr_FR: frFR,
};

/** The texts of a form locale. */
export function messagesFor(locale: HostedFormLocale): Messages {
  return DICTIONARY[locale];
}
